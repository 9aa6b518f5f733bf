"""libstdc++'s std::sort (introsort), replayed step by step on a Python list.

Where PyTorch sorts with a comparator that is not a strict weak order, the order it leaves is
the algorithm's, not the comparator's. unique(dim=...) is such a place: its CPU kernel orders
the slices with `std::sort` under a lexicographic `<` that skips positions where either side is
NaN, so a NaN is "equivalent" to every number and rows holding NaNs land wherever introsort's
moves put them. To give PyTorch's results there, ember runs the same moves: GCC's introsort
loop (median-of-three pivot, unguarded partition, heapsort past the depth limit) down to runs
of 16, then its final insertion sort. With a proper strict weak order any sort agrees with it,
so callers use this only when the comparator is not one (a NumPy sort is faster).
"""

_THRESHOLD = 16   # libstdc++'s _S_threshold: introsort leaves runs this short to insertion sort


def std_sort(items, less):
    """Sort the list `items` in place as libstdc++'s std::sort(first, last, less) would."""
    n = len(items)
    if n > 1:
        _introsort_loop(items, 0, n, 2 * (n.bit_length() - 1), less)
        _final_insertion_sort(items, 0, n, less)
    return items


def _introsort_loop(a, first, last, depth_limit, less):
    while last - first > _THRESHOLD:
        if depth_limit == 0:
            _heap_sort(a, first, last, less)
            return
        depth_limit -= 1
        cut = _partition_pivot(a, first, last, less)
        _introsort_loop(a, cut, last, depth_limit, less)
        last = cut


def _partition_pivot(a, first, last, less):
    """Move the median of (first + 1, middle, last - 1) to `first` and partition around it."""
    mid = first + (last - first) // 2
    x, y, z = first + 1, mid, last - 1
    if less(a[x], a[y]):
        median = y if less(a[y], a[z]) else (z if less(a[x], a[z]) else x)
    else:
        median = x if less(a[x], a[z]) else (z if less(a[y], a[z]) else y)
    a[first], a[median] = a[median], a[first]
    pivot = a[first]
    lo, hi = first + 1, last
    while True:
        # libstdc++ scans unguarded (for a strict weak order the median's neighbours stop
        # both scans); the bound keeps a broken order from running off the end, where C++
        # would read past the array
        while lo < last and less(a[lo], pivot):
            lo += 1
        hi -= 1
        while less(pivot, a[hi]):
            hi -= 1
        if not lo < hi:
            return lo
        a[lo], a[hi] = a[hi], a[lo]
        lo += 1


def _final_insertion_sort(a, first, last, less):
    if last - first > _THRESHOLD:
        _insertion_sort(a, first, first + _THRESHOLD, less)
        for i in range(first + _THRESHOLD, last):
            _linear_insert(a, i, less)
    else:
        _insertion_sort(a, first, last, less)


def _insertion_sort(a, first, last, less):
    for i in range(first + 1, last):
        if less(a[i], a[first]):   # smaller than the first: straight to the front
            a[first:i + 1] = [a[i]] + a[first:i]
        else:
            _linear_insert(a, i, less)


def _linear_insert(a, i, less):
    value = a[i]
    while i > 0 and less(value, a[i - 1]):   # (unguarded in libstdc++, as above)
        a[i] = a[i - 1]
        i -= 1
    a[i] = value


def _heap_sort(a, first, last, less):
    """std::make_heap then std::sort_heap on a[first:last]."""
    n = last - first
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(a, first, parent, n, a[first + parent], less)
    while n > 1:
        n -= 1
        value = a[first + n]
        a[first + n] = a[first]
        _adjust_heap(a, first, 0, n, value, less)


def _adjust_heap(a, base, hole, n, value, less):
    """Sift the hole at `hole` down to a leaf along the larger children, then push `value` up
    from there (libstdc++'s __adjust_heap followed by __push_heap)."""
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if less(a[base + child], a[base + child - 1]):
            child -= 1
        a[base + hole] = a[base + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        a[base + hole] = a[base + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(a[base + parent], value):
        a[base + hole] = a[base + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[base + hole] = value
