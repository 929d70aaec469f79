"""Model -> text. Canonical printers for each format, next to the model they print."""
