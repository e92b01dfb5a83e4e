"""Independent computations for test/eval/repair-stats.test.ts (scipy and numpy only).

Usage: python repair_stats.py < request.json > result.json, where the request is
  {"mcnemar": [[only_a, only_b], ...],
   "wilson": [[k, n, level], ...],
   "bootstrap": {"items": [{"unit", "a", "b"}], "units": [sorted unit ids],
                 "indices": [[unit index drawn, ...] per resample], "level": 0.95}}
and the result holds, in the same order, the exact McNemar p (scipy.stats.binomtest), the mid-p
(2 P(X < k) + P(X = k) from scipy.stats.binom), the Wilson interval (binomtest's
proportion_ci(method="wilson")), and the percentile interval (numpy, linear interpolation) of
the pooled and per-unit-mean accuracy difference a - b over the given resamples of units.
"""
import json
import sys

import numpy as np
from scipy.stats import binom, binomtest


def mcnemar(only_a, only_b):
    n = only_a + only_b
    if n == 0:
        return {"p": 1.0, "mid_p": 1.0}
    k = min(only_a, only_b)
    p = binomtest(only_a, n, 0.5, alternative="two-sided").pvalue
    mid = min(1.0, 2 * binom.cdf(k - 1, n, 0.5) + binom.pmf(k, n, 0.5))
    return {"p": float(p), "mid_p": float(mid)}


def wilson(k, n, level):
    ci = binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    return {"lo": float(ci.low), "hi": float(ci.high)}


def bootstrap(req):
    units = req["units"]
    pos = {u: i for i, u in enumerate(units)}
    m = len(units)
    n = np.zeros(m)
    ka = np.zeros(m)
    kb = np.zeros(m)
    for it in req["items"]:
        i = pos[it["unit"]]
        n[i] += 1
        ka[i] += 1 if it["a"] else 0
        kb[i] += 1 if it["b"] else 0
    pooled, mean = [], []
    for draw in req["indices"]:
        idx = np.asarray(draw, dtype=int)
        pooled.append(ka[idx].sum() / n[idx].sum() - kb[idx].sum() / n[idx].sum())
        mean.append(np.mean(ka[idx] / n[idx]) - np.mean(kb[idx] / n[idx]))
    q = [(1 - req["level"]) / 2 * 100, (1 + req["level"]) / 2 * 100]
    pl = np.percentile(np.asarray(pooled), q, method="linear")
    ml = np.percentile(np.asarray(mean), q, method="linear")
    return {
        "pooled": {"value": float(ka.sum() / n.sum() - kb.sum() / n.sum()), "lo": float(pl[0]), "hi": float(pl[1])},
        "unit_mean": {"value": float(np.mean(ka / n) - np.mean(kb / n)), "lo": float(ml[0]), "hi": float(ml[1])},
    }


def main():
    req = json.load(sys.stdin)
    out = {
        "mcnemar": [mcnemar(a, b) for a, b in req.get("mcnemar", [])],
        "wilson": [wilson(k, n, lvl) for k, n, lvl in req.get("wilson", [])],
    }
    if "bootstrap" in req:
        out["bootstrap"] = bootstrap(req["bootstrap"])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
