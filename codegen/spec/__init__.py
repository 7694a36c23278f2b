"""The spec front end: YAML with positions -> checked by the rules -> the immutable model.

Nothing here imports the emitters, the targets or the runners.
"""
