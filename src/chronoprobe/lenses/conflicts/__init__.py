"""The conflicts lens: does context override a model's memory? (DynamicQA, MuLan, and their unification)."""
