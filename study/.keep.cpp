// Keeps the study library non-empty while its sources move in.
