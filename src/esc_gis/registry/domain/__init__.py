"""The registry's pure domain: the history's typed events, the permit's state folded from them, and the rules.

Nothing here touches a database, a file or the clock; the store appends events and the views
read the state.
"""
