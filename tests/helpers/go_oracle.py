"""Go's pprof as the oracle: ``go tool pprof -raw``, and ``profile.Parse`` + ``String()``.

Two views of how the real tool reads a file:

* :meth:`GoOracle.pprof`: what ``go tool pprof`` prints, e.g. ``-raw`` (after the driver
  merges samples and drops unused mappings; compare with :func:`pprof_text.stack_totals`);
* :meth:`GoOracle.profile_strings`: the exact ``Profile.String()`` of ``profile.Parse``
  for each file, from a tiny program built against the copy of google/pprof's ``profile``
  package that the Go toolchain vendors (``$GOROOT/src/cmd/vendor/github.com/google/pprof``),
  so nothing is downloaded. This is what pprof's own ``.string`` goldens are.

Go runs with a private HOME, GOCACHE and GOPATH under a temporary directory, offline
(``GOPROXY=off``, ``GOTOOLCHAIN=local``). Not specific to one format.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SEPARATOR = "\x00--- end of profile ---\n"

_PROGRAM = """package main

import (
	"fmt"
	"os"

	"oracle/profile"
)

func main() {
	for _, path := range os.Args[1:] {
		f, err := os.Open(path)
		if err == nil {
			var p *profile.Profile
			p, err = profile.Parse(f)
			f.Close()
			if err == nil {
				fmt.Print(p.String())
			}
		}
		if err != nil {
			fmt.Printf("ERROR: %v\\n", err)
		}
		fmt.Print("\\x00--- end of profile ---\\n")
	}
}
"""


class GoUnavailable(Exception):
    """Go, or the pprof sources it vendors, cannot be used here (the reason is the text)."""


class GoOracle:
    """Runs Go's pprof in a private environment rooted at *workdir*."""

    def __init__(self, workdir: Path) -> None:
        self.go = shutil.which("go")
        if self.go is None:
            raise GoUnavailable("the go command is not installed (Debian: golang-go)")
        self.workdir = workdir
        home = workdir / "home"
        home.mkdir(parents=True, exist_ok=True)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "GOCACHE": str(workdir / "gocache"),
            "GOPATH": str(workdir / "gopath"),
            "GOTOOLCHAIN": "local",
            "GOPROXY": "off",
            "GOFLAGS": "-mod=mod",
            "GO111MODULE": "on",
            "CGO_ENABLED": "0",
            "PPROF_TMPDIR": str(workdir / "pprof"),
            "PPROF_BINARY_PATH": str(workdir / "no-binaries"),
        }
        self._program: Path | None = None
        self.prints_columns = True
        """Whether this pprof's ``String()`` shows ``file:line:column`` (newer) or
        ``file:line`` (the copy vendored by Go 1.19, for example)."""

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([self.go, *args], env=self.env, capture_output=True, text=True,
                              errors="surrogateescape", timeout=timeout, cwd=self.workdir)

    def pprof(self, *args: str | Path, symbolize: bool = False,
              binary_path: Path | None = None) -> str:
        """What ``go tool pprof ARGS`` prints (``-symbolize=none`` unless *symbolize*; local
        binaries are looked up in *binary_path* only)."""
        env_path = self.env["PPROF_BINARY_PATH"]
        if binary_path is not None:
            self.env["PPROF_BINARY_PATH"] = str(binary_path)
        try:
            flags = ["tool", "pprof"] + ([] if symbolize else ["-symbolize=none"])
            done = self.run(*flags, *map(str, args), timeout=300)
        finally:
            self.env["PPROF_BINARY_PATH"] = env_path
        if done.returncode != 0:
            raise AssertionError(f"go tool pprof {' '.join(map(str, args))} failed:\n"
                                 f"{done.stderr}")
        return done.stdout

    def pprof_raw(self, path: Path, **options) -> str:
        """``go tool pprof -raw`` of *path* (options as :meth:`pprof`)."""
        return self.pprof("-raw", path, **options)

    def profile_strings(self, paths: list[Path]) -> list[str]:
        """``Profile.String()`` of ``profile.Parse`` of each of *paths* (or ``ERROR: ...``)."""
        program = self._build()
        done = subprocess.run([str(program), *map(str, paths)], capture_output=True,
                              text=True, errors="surrogateescape", timeout=120, env=self.env)
        if done.returncode != 0:
            raise AssertionError(f"the Go oracle failed:\n{done.stderr}")
        parts = done.stdout.split(SEPARATOR)
        assert parts[-1] == "" and len(parts) == len(paths) + 1, done.stdout[-500:]
        return parts[:-1]

    def _build(self) -> Path:
        if self._program is not None:
            return self._program
        done = self.run("env", "GOROOT")
        vendored = Path(done.stdout.strip()) / "src/cmd/vendor/github.com/google/pprof/profile"
        if done.returncode != 0 or not vendored.is_dir():
            raise GoUnavailable(f"this Go toolchain vendors no google/pprof ({vendored})")
        self.prints_columns = "Line[li].Column" in (vendored / "profile.go").read_text()
        source = self.workdir / "oracle"
        (source / "profile").mkdir(parents=True, exist_ok=True)
        for file in vendored.glob("*.go"):
            if not file.name.endswith("_test.go"):
                shutil.copyfile(file, source / "profile" / file.name)
        (source / "go.mod").write_text("module oracle\n\ngo 1.19\n")
        (source / "main.go").write_text(_PROGRAM)
        program = self.workdir / "pprof-profile-string"
        done = subprocess.run([self.go, "build", "-o", str(program), "."], env=self.env,
                              cwd=source, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise GoUnavailable(f"could not build the Go oracle:\n{done.stderr}")
        self._program = program
        return program
