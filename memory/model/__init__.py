"""The model interface every backend implements, and the strict gate every answer passes."""
