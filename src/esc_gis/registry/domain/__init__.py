"""The registry's pure domain: the history's typed events and the permit's state folded from them.

Nothing here touches a database, a file or the clock; the store appends events and the views
read the state.
"""
