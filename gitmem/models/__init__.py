"""Models as commands: the prompt on stdin, the reply on stdout. A machine-local ladder of at most
four of them (state/models.json) is tried in order; a rung that fails is benched and moved last."""
