"""PTX ISA facts as data: limits, undefined-behaviour rules, instruction forms and feature gates.

Everything above this layer reads the manual's facts from here; nothing else restates them.
"""
