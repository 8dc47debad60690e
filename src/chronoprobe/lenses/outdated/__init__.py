"""Question 1: is the model outdated? (DyKnow)"""
