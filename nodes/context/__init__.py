"""What the model is shown.

The context builder (recency-weighted history, per topic and branch) and the topic-shift detector
with its sentence embeddings.
"""
