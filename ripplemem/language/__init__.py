"""Reading text without a model: entities and relations (English and Chinese) and time phrases."""
