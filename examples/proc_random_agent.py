"""A reference client of the proc: protocol (docs/your_agent.md): plays a random legal move.

    mountain-rummy tournament --variant gin --agents greedy "proc:python examples/proc_random_agent.py"
"""
import json
import random
import sys

for line in sys.stdin:                       # one JSON message a line; stdin closes at the hand's end
    message = json.loads(line)
    if message["type"] == "hello":           # protocol, variant, options, seat, cards, seed, limits
        random.seed(message["seed"])
        print(json.dumps({"type": "ready"}), flush=True)
    elif message["type"] == "act":           # the seat's view, the legal action ids and their texts
        print(json.dumps({"action": random.choice(message["legal"])}), flush=True)
