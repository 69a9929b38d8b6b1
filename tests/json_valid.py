#!/usr/bin/python3
"""tests/json_valid.py - validate a --json document against its schema.

    json_valid.py [--drop MEMBER]... SCHEMA [FILE|-]

SCHEMA is a kind (pcp-split, stat-layout, stage-out-status, ...: the file
schemas/KIND.schema.json of this tree) or a schema file's path; FILE (or
stdin) holds one JSON document.  --drop removes a top-level member first
(the tests' negative checks: a document without it must fail).  The
schema is checked against its metaschema, and its $refs (common.schema.json
and the others) are resolved in its own directory, offline.

Exit 0 valid, 1 invalid (the validator's message on stderr), 2 no
validator or an unreadable file or schema.  The validator is Debian's
python3-jsonschema (tools/install-deps.sh installs it); JSON Schema draft
2020-12.
"""
import json
import pathlib
import sys
import warnings


def main(argv):
    drop = []
    while len(argv) >= 2 and argv[0] == "--drop":
        drop.append(argv[1])
        argv = argv[2:]
    if len(argv) not in (1, 2):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        import jsonschema
    except ImportError:
        print("json_valid: no JSON Schema validator: python3-jsonschema is "
              "not installed (sh tools/install-deps.sh)", file=sys.stderr)
        return 2
    here = pathlib.Path(__file__).resolve().parent.parent / "schemas"
    kind = argv[0]
    path = pathlib.Path(kind) if ("/" in kind or kind.endswith(".json")) \
        else here / (kind + ".schema.json")
    try:
        schema = json.loads(path.read_text())
        store = {}
        for f in path.resolve().parent.glob("*.schema.json"):
            store[f.as_uri()] = json.loads(f.read_text())
        text = sys.stdin.read() if len(argv) == 1 or argv[1] == "-" \
            else open(argv[1]).read()
    except (OSError, ValueError) as e:
        print("json_valid: %s" % e, file=sys.stderr)
        return 2
    try:
        doc = json.loads(text)
    except ValueError as e:
        print("json_valid: not one JSON document: %s" % e, file=sys.stderr)
        return 1
    for m in drop:
        if isinstance(doc, dict):
            doc.pop(m, None)
    cls = jsonschema.Draft202012Validator
    try:
        cls.check_schema(schema)
        for s in store.values():
            cls.check_schema(s)
    except jsonschema.exceptions.SchemaError as e:
        print("json_valid: schema %s: %s" % (path, e.message), file=sys.stderr)
        return 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        resolver = jsonschema.RefResolver(path.resolve().as_uri(), schema,
                                          store=store)
        errors = sorted(cls(schema, resolver=resolver).iter_errors(doc),
                        key=lambda e: list(e.absolute_path))
    if not errors:
        return 0
    for e in errors[:5]:
        where = "/".join(str(p) for p in e.absolute_path) or "(top)"
        print("json_valid: %s: %s: %s" % (path.name, where, e.message),
              file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
