"""Runs a composite action's steps as the GitHub runner does, here.

Usage: run_action.py ACTION_DIR WORKSPACE [--input NAME=VALUE]... [--env NAME=VALUE]...

(`--env GITHUB_ACTION_REF=...` and `GITHUB_ACTION_REPOSITORY=...` set the
`github.action_ref` and `github.action_repository` contexts.)

Reads ACTION_DIR/action.yml and runs its `runs.steps` in order, in
WORKSPACE: each `run:` step with `bash --noprofile --norc -eo pipefail`
(the runner's `shell: bash`), its `env:` and the runner's variables
(GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH, GITHUB_STEP_SUMMARY,
GITHUB_WORKSPACE, GITHUB_ACTION_PATH, RUNNER_TEMP, RUNNER_OS, RUNNER_ARCH,
and INPUT_<NAME> for every input); `if:` decides whether a step runs
(default `success()`); a `uses:` step is not run but recorded with its
evaluated `with:`. Step outputs are read back from GITHUB_OUTPUT
(`name=value` and `name<<DELIMITER` forms). Expressions are the subset the
action uses: `inputs.*`, `steps.*.outputs.*`, `github.*`, `runner.*`
contexts, string literals, `==`, `!=`, `&&`, `||`, `!`, parentheses,
`always()`, `success()`, `failure()`; anything else is an error, so the
action cannot outgrow what is tested.

Prints one JSON object: the action's outputs, each step's id, whether it
ran and its exit status, each step's outputs, the `uses:` steps, the job
summary; exits with
the status of the first failed step (0 when none failed), as the action's
step in a workflow would fail.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\))"
    r"|(?P<call>(?:always|success|failure|cancelled)\(\))"
    r"|(?P<ref>[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*))"
)


class Context:
    def __init__(self, inputs, github, runner):
        self.inputs = inputs
        self.github = github
        self.runner = runner
        self.steps = {}
        self.failed = False

    def ref(self, name):
        parts = name.split(".")
        if parts[0] == "inputs" and len(parts) == 2:
            if parts[1] not in self.inputs:
                raise SystemExit(f"unknown input in expression: {name}")
            return self.inputs[parts[1]]
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return self.steps.get(parts[1], {}).get(parts[3], "")
        if parts[0] == "github" and len(parts) == 2:
            return self.github.get(parts[1], "")
        if parts[0] == "runner" and len(parts) == 2:
            return self.runner.get(parts[1], "")
        if name in ("true", "false"):
            return name == "true"
        raise SystemExit(f"unsupported expression reference: {name}")

    def evaluate(self, text):
        """The value of an expression (without `${{ }}`)."""
        tokens = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise SystemExit(f"unsupported expression: {text!r}")
            tokens.append(m)
            pos = m.end()
        self.tokens, self.at = tokens, 0
        value = self.or_expr()
        if self.at != len(tokens):
            raise SystemExit(f"unsupported expression: {text!r}")
        return value

    def peek(self):
        if self.at < len(self.tokens):
            return self.tokens[self.at].group("op")
        return None

    def or_expr(self):
        value = self.and_expr()
        while self.peek() == "||":
            self.at += 1
            right = self.and_expr()
            value = value or right
        return value

    def and_expr(self):
        value = self.cmp_expr()
        while self.peek() == "&&":
            self.at += 1
            right = self.cmp_expr()
            value = value and right
        return value

    def cmp_expr(self):
        value = self.unary()
        while self.peek() in ("==", "!="):
            op = self.peek()
            self.at += 1
            right = self.unary()
            # Actions compare strings case-insensitively.
            same = str(value).lower() == str(right).lower()
            value = same if op == "==" else not same
        return value

    def unary(self):
        if self.peek() == "!":
            self.at += 1
            return not self.unary()
        if self.peek() == "(":
            self.at += 1
            value = self.or_expr()
            if self.peek() != ")":
                raise SystemExit("unbalanced parentheses")
            self.at += 1
            return value
        m = self.tokens[self.at]
        self.at += 1
        if m.group("str") is not None:
            return m.group("str")[1:-1].replace("''", "'")
        if m.group("call") is not None:
            name = m.group("call")[:-2]
            return {
                "always": True,
                "success": not self.failed,
                "failure": self.failed,
                "cancelled": False,
            }[name]
        if m.group("ref") is not None:
            return self.ref(m.group("ref"))
        raise SystemExit(f"unexpected token {m.group(0)!r}")

    def substitute(self, text):
        """`text` with every `${{ expr }}` replaced by its value."""

        def value(m):
            v = self.evaluate(m.group(1))
            if isinstance(v, bool):
                return "true" if v else "false"
            return str(v)

        return re.sub(r"\$\{\{(.*?)\}\}", value, str(text))

    def condition(self, text):
        if text is None:
            return not self.failed
        text = str(text).strip()
        if text.startswith("${{") and text.endswith("}}"):
            text = text[3:-2]
        value = self.evaluate(text)
        # As the runner does, a condition without a status function is
        # also `success() &&`.
        if not re.search(r"\b(always|success|failure|cancelled)\(\)", text):
            value = value and not self.failed
        return bool(value)


def read_commands(path):
    """name=value and name<<DELIMITER pairs of a GITHUB_OUTPUT-style file."""
    values = {}
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            while i < len(lines) and lines[i] != delimiter:
                body.append(lines[i])
                i += 1
            i += 1
            values[name] = "\n".join(body)
        else:
            name, value = line.split("=", 1)
            values[name] = value
    return values


def main():
    args = sys.argv[1:]
    action_dir, workspace = os.path.abspath(args[0]), os.path.abspath(args[1])
    given, extra_env = {}, {}
    rest = args[2:]
    while rest:
        flag, pair = rest[0], rest[1]
        rest = rest[2:]
        name, value = pair.split("=", 1)
        if flag == "--input":
            given[name] = value
        elif flag == "--env":
            extra_env[name] = value
        else:
            raise SystemExit(f"unknown flag {flag}")
    with open(os.path.join(action_dir, "action.yml"), encoding="utf-8") as f:
        action = yaml.safe_load(f)
    if action["runs"]["using"] != "composite":
        raise SystemExit("not a composite action")
    declared = action.get("inputs", {})
    for name in given:
        if name not in declared:
            raise SystemExit(f"the action has no input {name}")
    inputs = {
        name: given.get(name, str(spec.get("default", "")))
        for name, spec in declared.items()
    }
    temp = tempfile.mkdtemp(prefix="runner-")
    runner = {"os": "Linux", "arch": "X64", "temp": temp}
    github = {
        "workspace": workspace,
        "action_path": action_dir,
        "action_ref": extra_env.pop("GITHUB_ACTION_REF", ""),
        "action_repository": extra_env.pop("GITHUB_ACTION_REPOSITORY", ""),
        "token": "",
    }
    ctx = Context(inputs, github, runner)
    summary = os.path.join(temp, "step_summary.md")
    open(summary, "w").close()
    env = dict(os.environ)
    env.update(extra_env)
    env.update(
        {
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": workspace,
            "GITHUB_ACTION_PATH": action_dir,
            "GITHUB_STEP_SUMMARY": summary,
            "RUNNER_OS": "Linux",
            "RUNNER_ARCH": "X64",
            "RUNNER_TEMP": temp,
        }
    )
    for name, value in inputs.items():
        env["INPUT_" + name.replace(" ", "_").upper()] = value
    steps, uses, first_failure = [], [], 0
    for n, step in enumerate(action["runs"]["steps"]):
        sid = step.get("id", f"__{n}")
        record = {"id": sid, "name": step.get("name", ""), "ran": False}
        steps.append(record)
        if not ctx.condition(step.get("if")):
            continue
        if "uses" in step:
            with_ = {k: ctx.substitute(v) for k, v in step.get("with", {}).items()}
            uses.append({"uses": step["uses"], "with": with_})
            record["ran"] = True
            record["exit"] = 0
            continue
        if step.get("shell") != "bash":
            raise SystemExit(f"step {sid}: only shell: bash is run here")
        step_env = dict(env)
        for k, v in step.get("env", {}).items():
            step_env[k] = ctx.substitute(v)
        for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH"):
            path = os.path.join(temp, f"{name.lower()}_{n}")
            open(path, "w").close()
            step_env[name] = path
        script = os.path.join(temp, f"step_{n}.sh")
        with open(script, "w", encoding="utf-8") as f:
            f.write(ctx.substitute(step["run"]))
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
            cwd=step.get("working-directory", workspace),
            env=step_env,
            stdout=sys.stderr,
        )
        record["ran"] = True
        record["exit"] = proc.returncode
        ctx.steps[sid] = read_commands(step_env["GITHUB_OUTPUT"])
        env.update(read_commands(step_env["GITHUB_ENV"]))
        with open(step_env["GITHUB_PATH"], encoding="utf-8") as f:
            for line in f.read().split("\n"):
                if line:
                    env["PATH"] = line + os.pathsep + env["PATH"]
        if proc.returncode != 0:
            ctx.failed = True
            if first_failure == 0:
                first_failure = proc.returncode
    outputs = {
        name: ctx.substitute(spec["value"])
        for name, spec in action.get("outputs", {}).items()
    }
    with open(summary, encoding="utf-8") as f:
        summary_text = f.read()
    shutil.rmtree(temp, ignore_errors=True)
    print(
        json.dumps(
            {
                "outputs": outputs,
                "steps": steps,
                "step_outputs": ctx.steps,
                "uses": uses,
                "summary": summary_text,
            },
            indent=2,
        )
    )
    sys.exit(first_failure)


if __name__ == "__main__":
    main()
