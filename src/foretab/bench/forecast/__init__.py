"""Forecasting and imputation benchmarks: models side by side, the store model on its hold-out."""
