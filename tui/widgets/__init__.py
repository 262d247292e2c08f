"""The inspector's widgets: code view, source view, overview, loops, run and timeline panels."""
