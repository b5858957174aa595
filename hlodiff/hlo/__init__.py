"""Text -> model: the HLO lexer, the Lark grammar driver, the builder and the typed model."""
