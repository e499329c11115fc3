"""``schedule``, ``vector`` and ``index`` (Caballero et al.): screening schedules
and anonymity vectors with exact lexicographic indices."""

from __future__ import annotations

import argparse
import json

import numpy as np
from scipy import sparse

from ..core.errors import ParameterError, ProblemTooLargeError
from ..core.loading import load_table, to_safe_csv
from ..core.numbers import seed_number, time_limit_seconds
from ..measures.avector import (
    anonymity_vector,
    improvement,
    k_of,
    lex_index,
    partition_count,
    population_of,
    vector_text,
)
from ..transformations.schedule import DEFAULT_RULE, RULES, Cells, assign, make_schedule, matrix_vector
from ..transformations.schedule import METHODS as SCHEDULE_METHODS
from .common import analysis_frame, command, data_arguments, integers, load_dataset, print_json, write

PRINT_LIMIT = 40  # rows or columns of a matrix printed in full
JSON_DENSE_LIMIT = 10_000  # cells of a matrix written densely in JSON ("matrix"); the cells always are


def _print_matrix(matrix: sparse.csr_array, limit: int = PRINT_LIMIT) -> None:
    if matrix.shape[0] > limit or matrix.shape[1] > limit:
        print(
            f"matrix             {matrix.shape[0]:,} x {matrix.shape[1]:,}, {matrix.nnz:,} non-zero cells (too large to print)"
        )
        return
    dense = matrix.toarray()
    width = max(2, len(str(int(dense.max(initial=0)))))
    print("matrix (rows: quasi-identifier values, columns: resources)")
    for row in dense:
        print("  " + " ".join(f"{int(x):>{width}}" for x in row))


def _index_or_none(vector: tuple[int, ...]) -> tuple[int | None, str | None]:
    """The exact index, or None and the sentence saying why it is out of reach."""
    try:
        return lex_index(vector), None
    except ProblemTooLargeError as err:
        return None, str(err)


def _matrix_json(matrix: sparse.csr_array) -> dict:
    """The schedule's non-zero cells [row, resource, people] (and the dense matrix when small)."""
    cells = Cells.from_matrix(matrix)
    out: dict = {"shape": list(matrix.shape)}
    if matrix.shape[0] * matrix.shape[1] <= JSON_DENSE_LIMIT:
        out["matrix"] = matrix.toarray().tolist()
    out["cells"] = np.column_stack([cells.rows, cells.cols, cells.counts]).tolist()
    return out


def _schedule(args: argparse.Namespace) -> int:
    seed, time_limit = seed_number(args.seed), time_limit_seconds(args.time_limit)
    population_mode = bool(args.file or args.sample)
    index_note = None
    if population_mode and (args.freqs or args.capacities):
        raise ParameterError("Give either --freqs and --capacities, or a population with --resources; not both.")
    if population_mode:
        if not args.resources:
            raise ParameterError(
                "Give the resource table (one row per slot with a capacity column) with --resources FILE."
            )
        dataset = load_dataset(args)
        qis = list(dataset.quasi_identifiers)
        group = [args.group] if args.group and args.group not in qis else []
        population, dropped = analysis_frame(dataset, qis + group, "--group")
        resources = load_table(args.resources, delimiter=args.delimiter, encoding=args.encoding).frame
        res = make_schedule(
            population,
            resources,
            qis,
            count=dataset.count,
            capacity=args.capacity,
            group=args.group,
            method=args.method,
            rule=args.rule,
            seed=seed,
            time_limit=time_limit,
        )
        if args.out:
            write(args.out, to_safe_csv(res.schedule))
        matrix, vector, index, base, proven = res.matrix, res.vector, res.index, res.base_vector, res.proven_optimal
    else:
        if not (args.freqs and args.capacities):
            raise ParameterError(
                "Give --freqs and --capacities (e.g. --freqs 4,4,5,2 --capacities 4,2,4,3,2), "
                "or a population file with --resources FILE."
            )
        matrix = assign(
            integers(args.freqs, "frequencies"),
            integers(args.capacities, "capacities"),
            args.method,
            rule=args.rule,
            seed=seed,
            time_limit=time_limit,
        )
        vector = matrix_vector(matrix)
        (index, index_note), base, proven, dropped = _index_or_none(vector), None, None, 0
    result = {
        "method": args.method,
        "rule": (args.rule or DEFAULT_RULE) if args.method == "heuristic" else None,
        **_matrix_json(matrix),
        "anonymity_vector": list(vector),
        "k": k_of(vector),
        "lexicographic_index": None if index is None else str(index),
    }
    if index_note:
        result["lexicographic_index_note"] = index_note
    if base is not None:
        result["vector_before"] = list(base)
    if args.method == "optimal" and proven is not None:
        result["proven_optimal"] = proven
    if args.json:
        print_json(args, json.dumps(result, indent=2))
        return 0
    print(f"method             {args.method}" + (f" (rule {result['rule']})" if result["rule"] else ""))
    if dropped:
        print(f"rows dropped       {dropped:,}")
    _print_matrix(matrix)
    if base is not None:
        print(f"vector before      {vector_text(base)}")
    print(f"anonymity vector   {vector_text(vector)}")
    print(f"k                  {k_of(vector)}")
    print(f"lexicographic index {'-' if index is None else index}")
    if index_note:
        print(f"                   ({index_note})")
    if proven is not None:
        print(f"proven optimal     {'yes' if proven else 'no (time limit)'}")
    return 0


def _vector_summary(vector: tuple[int, ...]) -> dict:
    people = population_of(vector)
    return {
        "anonymity_vector": list(vector),
        "k": k_of(vector),
        "people": people,
        "lexicographic_index": str(lex_index(vector)),
        "possible_vectors": str(partition_count(people)),
    }


def _print_vector_summary(result: dict) -> None:
    print(f"anonymity vector   {vector_text(result['anonymity_vector'])}")
    print(f"k                  {result['k']}")
    print(f"people             {result['people']:,}")
    print(f"lexicographic index {result['lexicographic_index']} of {result['possible_vectors']} possible vectors")


def _vector(args: argparse.Namespace) -> int:
    result = _vector_summary(anonymity_vector(integers(args.sizes, "class sizes")))
    if args.json:
        print_json(args, json.dumps(result, indent=2))
    else:
        _print_vector_summary(result)
    return 0


def _index(args: argparse.Namespace) -> int:
    vector = tuple(integers(args.vector, "anonymity-vector entries"))
    result = _vector_summary(vector)
    if args.versus or args.base:
        if not (args.versus and args.base):
            raise ParameterError(
                "The improvement needs both --versus (the other vector) and --base (the reference vector)."
            )
        other, base = tuple(integers(args.versus, "--versus entries")), tuple(integers(args.base, "--base entries"))
        result["improvement"] = improvement(vector, other, base)
    if args.json:
        print_json(args, json.dumps(result, indent=2))
        return 0
    _print_vector_summary(result)
    if "improvement" in result:
        print(
            f"improvement        {100 * result['improvement']:.4f}% over {vector_text(other)} (base {vector_text(base)})"
        )
    return 0


def register(commands) -> None:
    schedule = command(
        commands,
        "schedule",
        "screening schedule keeping people anonymous: matrix, anonymity vector, k, index",
        "python -m anonlib schedule --freqs 4,4,5,2 --capacities 4,2,4,3,2 --method heuristic --rule largest",
        _schedule,
    )
    schedule.add_argument("--freqs", help="people per quasi-identifier value, e.g. 4,4,5,2")
    schedule.add_argument("--capacities", help="seats per resource (slot), e.g. 4,2,4,3,2")
    schedule.add_argument(
        "--population", dest="file", help="population table instead of --freqs (one row per person, or --count)"
    )
    data_arguments(schedule, qi=True, positional=False)
    schedule.add_argument("--resources", help="resource table: one row per slot with a capacity column")
    schedule.add_argument("--capacity", default="capacity", help="capacity column of --resources (default: capacity)")
    schedule.add_argument(
        "--group", help="column of both tables (e.g. region): people only go to their own group's slots"
    )
    schedule.add_argument("--method", choices=list(SCHEDULE_METHODS), default="heuristic", help="default heuristic")
    schedule.add_argument("--rule", choices=list(RULES), help=f"heuristic split rule (default {DEFAULT_RULE})")
    schedule.add_argument("--seed", default="0", help="seed of the random method, 0 to 4294967295 (default 0)")
    schedule.add_argument(
        "--time-limit", help="seconds per step of the optimal method, above 0 and at most 600 (default 10)"
    )
    schedule.add_argument("--out", metavar="CSV", help="with a population: write the schedule to this CSV file")
    schedule.add_argument("--json", action="store_true", help="print the result as JSON")

    vector = command(
        commands,
        "vector",
        "anonymity vector, k and exact lexicographic index of equivalence-class sizes",
        "python -m anonlib vector --sizes 4,4,5,2",
        _vector,
    )
    vector.add_argument("--sizes", required=True, help="comma-separated class sizes")
    vector.add_argument("--json", action="store_true", help="print the result as JSON")

    index = command(
        commands,
        "index",
        "exact lexicographic index of an anonymity vector (and the improvement over another)",
        "python -m anonlib index --vector 0,2,1,2 --versus 2,3,1,1 --base 0,1,0,2,1",
        _index,
    )
    index.add_argument("--vector", required=True, help="comma-separated anonymity vector")
    index.add_argument("--versus", help="another vector of the same people: print the anonymity improvement over it")
    index.add_argument("--base", help="the reference vector the improvement is relative to")
    index.add_argument("--json", action="store_true", help="print the result as JSON")
