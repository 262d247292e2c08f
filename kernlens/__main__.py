from kernlens.cli import entry

entry()
