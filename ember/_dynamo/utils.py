"""Counters of the compile machinery (torch._dynamo.utils.counters)."""
import collections

counters = collections.defaultdict(collections.Counter)
