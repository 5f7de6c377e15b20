"""The offline model: rules that answer extraction and dream plans from the payload alone, with no network."""
