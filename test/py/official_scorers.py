"""Independent Python transcriptions of the three benchmarks' official scorers.

Written from reading the official code (not copied); every rule names the repository, file and
line it follows, at these commits:
  QwenLM/ProcessBench        e802463  code/run_eval.py
  ssmisya/PRMBench           a1ae4ea  mr_eval/tasks/prmtest_classified/task.py,
                                      mr_eval/utils/task_utils.py,
                                      mr_visualize/eval_res_view/draw_tabs/form_latex_strs.ipynb
  OpenStellarTeam/DeltaBench 6b67c64  evaluation.py

Usage: python official_scorers.py < request.json > result.json, where the request is
{"benchmark": "processbench" | "prmbench" | "deltabench", ...} (see each function). Only the
standard library and numpy are used: the DeltaBench evaluator's pandas calls are spelled out
with pandas' semantics (mean and sum skip missing values).
"""
import json
import math
import os
import re
import sys

import numpy as np


# ----------------------------------------------------------------------------- ProcessBench

def processbench(req):
    """req: {"samples": [{"split", "label", "prediction": int | null}]}.

    Per split (code/run_eval.py):
      - an answer that is no integer becomes None (lines 92-96), and match = (pred == label)
        (line 112), so None never matches and -1 matches a clean label;
      - error_data = label != -1, correct_data = label == -1 (lines 117-118);
      - acc1 / acc2 = np.mean(match) * 100 over each, f1 = 2*acc1*acc2/(acc1+acc2)
        (lines 127-129). numpy gives nan for an empty mean and for 0/0.
    The script prints per split; the average over splits is the paper's headline.
    """
    splits = []
    for s in req["samples"]:
        if s["split"] not in splits:
            splits.append(s["split"])
    out = {}
    f1s = []
    with np.errstate(all="ignore"):
        for sp in splits:
            data = [s for s in req["samples"] if s["split"] == sp]
            match = lambda s: s["prediction"] is not None and s["prediction"] == s["label"]
            err = [match(s) for s in data if s["label"] != -1]
            cor = [match(s) for s in data if s["label"] == -1]
            acc1 = np.float64(np.mean(err) * 100) if err else np.float64("nan")
            acc2 = np.float64(np.mean(cor) * 100) if cor else np.float64("nan")
            f1 = 2 * acc1 * acc2 / (acc1 + acc2)
            out[f"acc_err:{sp}"] = float(acc1)
            out[f"acc_cor:{sp}"] = float(acc2)
            out[f"f1:{sp}"] = float(f1)
            f1s.append(float(f1))
    out["average_f1"] = sum(f1s) / len(f1s) if f1s else float("nan")
    return out


# ----------------------------------------------------------------------------- PRMBench

def prm_load(data_dir):
    """The evaluator's view of the data (task.py load_data_function, lines 16-56).

    Reads every .jsonl of the folder (task_utils.py line 33; os.listdir order there, sorted
    here so the result does not depend on the file system). Each item is keyed
    "<classification>_<idx>" and kept only the first time its key is seen (lines 41-45); a
    redundancy item ("redundency") also yields its original solution once as a clean
    "correct_<idx>" sample with no error steps (lines 29-40).
    """
    files = sorted(f for f in os.listdir(data_dir) if f.endswith(".jsonl"))
    meta, seen = [], set()
    for f in files:
        with open(os.path.join(data_dir, f), encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                item = json.loads(line)
                cls = item["classification"]
                if cls == "redundency":
                    cid = f"correct_{item['idx']}"
                    if cid not in seen:
                        meta.append(dict(idx=cid, steps=item["original_process"], error_steps=[], classification="correct"))
                        seen.add(cid)
                key = f"{cls}_{item['idx']}"
                if key not in seen:
                    meta.append(dict(idx=key, steps=item["modified_process"], error_steps=item["error_steps"], classification=cls))
                    seen.add(key)
    return meta


def prm_step_counts(error_steps, labels):
    """task.py eval_on_hallucination_step (lines 248-294), the F1 part.

    error steps are 1-based and shifted to 0-based (line 250); only the indices of the judge's
    labels are visited (line 269), so error steps past the end never count; a labelled step in
    the error list is FP when judged correct (True) and TN otherwise, any other step TP when
    judged correct and FN otherwise (lines 277-294).
    """
    wrong = [i - 1 for i in error_steps]
    c = dict(TP=0, FP=0, TN=0, FN=0)
    for idx in range(len(labels)):
        if idx in wrong:
            c["FP" if labels[idx] == 1 else "TN"] += 1
        else:
            c["TP" if labels[idx] == 1 else "FN"] += 1
    return c


def prm_f1s(c):
    """Precision/recall/F1 of both classes with the -1 sentinel (task.py lines 204-209 and 224-229)."""
    p = c["TP"] / (c["TP"] + c["FP"]) if (c["TP"] + c["FP"]) != 0 else -1
    r = c["TP"] / (c["TP"] + c["FN"]) if (c["TP"] + c["FN"]) != 0 else -1
    f1 = 2 * p * r / (p + r) if (p + r) != 0 else -1
    np_ = c["TN"] / (c["TN"] + c["FN"]) if (c["TN"] + c["FN"]) != 0 else -1
    nr = c["TN"] / (c["TN"] + c["FP"]) if (c["TN"] + c["FP"]) != 0 else -1
    nf1 = 2 * np_ * nr / (np_ + nr) if (np_ + nr) != 0 else -1
    return f1, nf1


def prm_table_score(f1, nf1, cls):
    """Notebook form_latex_strs.ipynb, cell 2, get_prmscore_from_current_res_dict: the overall
    score and each class's are 0.5*f1 + 0.5*negative_f1, except multi_solutions, which takes
    f1 alone; a score not above 0 becomes 0 (and prints as "-")."""
    s = f1 if cls == "multi_solutions" else f1 * 0.5 + nf1 * 0.5
    return s if s > 0 else 0


# Notebook cell 1, classification_parallel_dict; cell 2 get_avg_prmscore_from_current_res_dict averages a group.
PRM_GROUPS = dict(
    simplicity=["redundency", "circular"],
    soundness=["counterfactual", "step_contradiction", "domain_inconsistency", "confidence"],
    sensitivity=["missing_condition", "deception", "multi_solutions"],
)


def prmbench(req):
    """req: {"data_dir", "results": [{"idx", "validity": bool, "labels": [bool]}]}.

    task.py evaluate_function (lines 59-243), its F1 part:
      - results are filtered to the first one per idx that the data knows (lines 77-83); the
        count check of line 85 is left out so partial runs can be scored;
      - an invalid result ("validity" false) is skipped (lines 102, 136);
      - "correct" samples add to their class only (lines 95-120), every other sample to its
        class and to the overall pool (lines 133-174);
      - per class and overall, the F1s of prm_f1s, and the table scores of prm_table_score.
    Only validity labels are given (a critic model has no redundancy head, lines 155-161).
    """
    meta = prm_load(req["data_dir"])
    by_idx = {m["idx"]: m for m in meta}
    classes = set(m["classification"] for m in meta)
    per = {c: dict(TP=0, FP=0, TN=0, FN=0) for c in classes}
    total = dict(TP=0, FP=0, TN=0, FN=0)
    seen = set()
    for r in req["results"]:
        if r["idx"] in seen or r["idx"] not in by_idx:
            continue
        seen.add(r["idx"])
        if not r["validity"]:
            continue
        ref = by_idx[r["idx"]]
        c = prm_step_counts(ref["error_steps"], r["labels"])
        for k in c:
            per[ref["classification"]][k] += c[k]
            if ref["classification"] != "correct":
                total[k] += c[k]
    f1, nf1 = prm_f1s(total)
    out = {"f1_pos": f1, "f1_neg": nf1, "prm_score_raw": f1 * 0.5 + nf1 * 0.5, "prm_score": prm_table_score(f1, nf1, None)}
    for cls in classes:
        f1, nf1 = prm_f1s(per[cls])
        out[f"f1_pos:{cls}"] = f1
        out[f"f1_neg:{cls}"] = nf1
        out[f"prm_score:{cls}"] = prm_table_score(f1, nf1, cls)
    for name, members in PRM_GROUPS.items():
        present = [m for m in members if m in classes]
        if present:
            out[f"prm_avg:{name}"] = sum(out[f"prm_score:{m}"] for m in present) / len(present)
    out["_classes"] = sorted(classes)
    out["_samples"] = len(meta)
    return out


# ----------------------------------------------------------------------------- DeltaBench

def delta_first_number(s):
    """evaluation.py extract_first_number (lines 27-36): the first run of digits, or None."""
    m = re.search(r"\d+", s)
    return m.group() if m else None


def delta_parse(critic, gold):
    """evaluation.py parse_output (lines 39-114) for one critique and the gold section list.

    The conclusion is the text before "Error Section Number:" after the last "Conclusion:"; it
    reports errors when it contains "yes" (lines 57-58). Each "Error Section Number:" chunk
    gives the first number before its "Explanation:", -1 when none (lines 66-73). Predicted
    sections above the highest gold section are dropped (lines 84-85); TP/FP/FN over sets and
    P, R, F1 with 0 when undefined (lines 88-95). With no gold sections max() raises, which the
    caller catches and writes the line without metrics (lines 218-222).
    """
    result = critic.split("Error Section Number:")[0].split("Conclusion:")[-1].strip()
    nums = []
    if "yes" in result.lower():
        for chunk in critic.split("Error Section Number:")[1:]:
            n = delta_first_number(chunk.split("Explanation:")[0].strip())
            nums.append(int(n) if n else -1)
    if not gold:
        return None
    top = max(gold)
    nums = [x for x in nums if x <= top]
    tp = len(set(nums) & set(gold))
    fp = len(set(nums) - set(gold))
    fn = len(set(gold) - set(nums))
    p = tp / (tp + fp) if (tp + fp) > 0 else 0
    r = tp / (tp + fn) if (tp + fn) > 0 else 0
    f1 = (2 * p * r) / (p + r) if (p + r) > 0 else 0
    return dict(precision=p, recall=r, f1_score=f1, tp_step=tp, fp_step=fp, fn_step=fn)


def delta_group(rows):
    """evaluation.py calculate_accuracies_v2 (lines 251-278): macro = column means, micro from
    column sums, 0 when undefined. pandas' mean and sum skip rows without metrics; a mean over
    none is nan, a sum over none 0."""
    scored = [r for r in rows if r is not None]
    mean = lambda k: sum(r[k] for r in scored) / len(scored) if scored else float("nan")
    tp = sum(r["tp_step"] for r in scored)
    fp = sum(r["fp_step"] for r in scored)
    fn = sum(r["fn_step"] for r in scored)
    pm = tp / (tp + fp) if (tp + fp) > 0 else 0
    rm = tp / (tp + fn) if (tp + fn) > 0 else 0
    f1m = 2 * (pm * rm) / (pm + rm) if (pm + rm) > 0 else 0
    return dict(macro_precision=mean("precision"), macro_recall=mean("recall"), macro_f1=mean("f1_score"), micro_precision=pm, micro_recall=rm, micro_f1=f1m)


def deltabench(req):
    """req: {"data_file", "critics": [str]} — one critique per data line, in file order.

    process_line (lines 179-222): gold = set(unuseful + error section numbers) (lines 187-191);
    an empty critique is written without metrics (lines 208-212). get_metrics (lines 281-299):
    an "Overall" row over every line, then one row per task_l1 (groupby).
    """
    lines = []
    with open(req["data_file"], encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                d = json.loads(line)
                if "question" in d:  # deal_down_data skips other lines (lines 242-243)
                    lines.append(d)
    assert len(lines) == len(req["critics"]), "one critique per data line"
    rows = []
    for d, critic in zip(lines, req["critics"]):
        gold = list(set(d["reason_unuseful_section_numbers"] + d["reason_error_section_numbers"]))
        rows.append(None if critic == "" else delta_parse(critic, gold))
    out = dict(delta_group(rows))
    tasks = sorted(set(d["task_l1"] for d in lines))
    for t in tasks:
        for k, v in delta_group([r for r, d in zip(rows, lines) if d["task_l1"] == t]).items():
            out[f"{k}:{t}"] = v
    out["_tasks"] = tasks
    return out


def main():
    req = json.load(sys.stdin)
    fn = dict(processbench=processbench, prmbench=prmbench, deltabench=deltabench)[req["benchmark"]]
    out = fn(req)
    # JSON has no nan: send it as null.
    clean = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}
    json.dump(clean, sys.stdout)


if __name__ == "__main__":
    main()
