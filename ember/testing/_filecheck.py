"""torch.testing.FileCheck: LLVM FileCheck's idea for test assertions on printed text (graphs,
generated code, stack traces). Checks are queued with builder calls and `run(text)` matches them
in order, each search starting where the previous match ended:

    FileCheck().check("placeholder").check_not("call_module").check("output").run(text)

check(s)               s occurs at or after the current position
check_next(s)          s occurs on the line after the previous match
check_same(s)          s occurs on the same line as the previous match
check_count(s, n, exactly=False)
                       n occurrences of s follow; with exactly, no (n+1)th follows
check_not(s)           s does not occur between the previous match and the next check's match
                       (or the end of the text if nothing follows)
check_regex(r)         like check, with a regular expression

A failed check raises RuntimeError quoting the check and the text it was run on, as PyTorch's.
"""
import re

__all__ = ["FileCheck"]


class FileCheck:
    def __init__(self):
        self._checks = []

    def _add(self, kind, pattern, *extra):
        self._checks.append((kind, pattern) + extra)
        return self

    def check(self, s):
        return self._add("check", re.escape(s))

    def check_next(self, s):
        return self._add("check_next", re.escape(s))

    def check_same(self, s):
        return self._add("check_same", re.escape(s))

    def check_regex(self, r):
        return self._add("check", r)

    def check_count(self, s, count, exactly=False):
        return self._add("check_count", re.escape(s), count, exactly)

    def check_not(self, s):
        return self._add("check_not", re.escape(s))

    def run(self, text):
        if not isinstance(text, str):   # a Graph, a DispatchKeySet: checked as printed
            text = str(text)
        pos = 0
        pending_not = []        # check_not patterns waiting for the next match to bound them
        for check in self._checks:
            kind, pattern = check[0], check[1]
            if kind == "check_not":
                pending_not.append(pattern)
                continue
            start = pos
            if kind == "check_count":
                count, exactly = check[2], check[3]
                for _ in range(count):
                    m = re.compile(pattern).search(text, pos)
                    if m is None:
                        self._fail(check, text, f"expected {count} occurrences")
                    pos = m.end()
                if exactly and re.compile(pattern).search(text, pos) is not None:
                    self._fail(check, text, f"expected exactly {count} occurrences, found more")
                end = pos
            else:
                m = re.compile(pattern).search(text, pos)
                if m is None:
                    self._fail(check, text, "no match")
                line_gap = text.count("\n", pos, m.start())
                if kind == "check_next" and line_gap != 1:
                    self._fail(check, text, "match is not on the next line")
                if kind == "check_same" and line_gap != 0:
                    self._fail(check, text, "match is not on the same line")
                end, pos = m.start(), m.end()
            self._check_nots(pending_not, text, start, end)
            pending_not = []
        self._check_nots(pending_not, text, pos, len(text))

    def _check_nots(self, patterns, text, start, end):
        for pattern in patterns:
            if re.compile(pattern).search(text, start, end) is not None:
                self._fail(("check_not", pattern), text, "found a forbidden match")

    @staticmethod
    def _fail(check, text, why):
        raise RuntimeError(f"{check[0]}: {check[1]!r} ({why}) in:\n{text}")
