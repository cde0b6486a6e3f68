"""PySpark side of kafka-chaos: the streaming consumer and the verification checks."""
