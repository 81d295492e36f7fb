//! Programs that run what the workspace tells them to: `make` runs the
//! Makefile's recipes, `npm run` the scripts of `package.json`, `cargo`
//! build scripts, `pytest` the tests and `conftest.py`. The model can
//! change those files, so approving such a program (or letting a hook run
//! it outside the sandbox) approves whatever the files say at the time it
//! runs. Lathe says so in the grant it offers, and never runs a hook of
//! this kind outside the sandbox.

use crate::protocol::operation::{Program, SimpleCommand};

/// What the workspace gives a program to run, in words (`the Makefile`),
/// if it runs the workspace's instructions; `None` for a program that
/// runs only what its arguments say.
pub fn instructions(program: &str, args: &[&str]) -> Option<&'static str> {
    let sub = args.iter().find(|a| !a.starts_with('-')).copied();
    Some(match program {
        "make" | "gmake" | "bmake" | "remake" => "the Makefile",
        "just" => "the justfile",
        "npm" | "pnpm" | "yarn" | "bun" | "corepack" => "package.json's scripts",
        "npx" | "pnpx" | "bunx" => "the packages in node_modules",
        "deno" if matches!(sub, Some("task" | "run" | "test" | "bench" | "serve")) => {
            "deno.json's tasks and the code they run"
        }
        // A rustup proxy runs the toolchain rust-toolchain.toml names,
        // whatever the subcommand.
        "cargo" | "rustc" | "rustfmt" | "rustdoc" | "clippy-driver" | "rust-analyzer" => {
            "rust-toolchain.toml (the toolchain it runs), Cargo.toml and its build scripts"
        }
        // go.mod's `toolchain` line picks the go that runs.
        "go" | "gofmt" => "go.mod (the toolchain it runs) and the code it builds",
        "pylint" => "the workspace's pylintrc (its init-hook is code)",
        "mypy" | "dmypy" => "mypy.ini and its plugins (code)",
        "flake8" => "its configuration's local plugins (code)",
        "rubocop" => "its configuration's `require` (code)",
        "pytest" | "py.test" => "the tests and conftest.py",
        "tox" => "tox.ini and the code it tests",
        "nox" => "noxfile.py",
        "rake" => "the Rakefile",
        "bundle" | "bundler" => "the Gemfile and what it runs",
        "gradle" | "gradlew" => "the Gradle build scripts",
        "mvn" | "mvnw" => "pom.xml and its plugins",
        "ant" => "build.xml",
        "sbt" => "build.sbt",
        "bazel" | "bazelisk" => "the BUILD files",
        "cmake" | "ctest" => "CMakeLists.txt",
        "ninja" => "build.ninja",
        "meson" => "meson.build",
        "scons" => "the SConstruct file",
        "poetry" | "pipenv" | "pdm" | "hatch" | "uv" | "rye"
            if matches!(
                sub,
                Some("run" | "test" | "build" | "install" | "sync" | "shell")
            ) =>
        {
            "pyproject.toml and the code it runs"
        }
        "composer" => "composer.json's scripts",
        "mix" => "mix.exs",
        "dotnet" => "the project files and the code they build",
        "swift" => "Package.swift",
        "zig" if sub == Some("build") => "build.zig",
        "dune" | "stack" | "cabal" => "the project files and the code they build",
        "flutter" | "dart" => "the project and the code it builds",
        "pre-commit" | "lefthook" | "husky" => "the hook configuration",
        "jest" | "vitest" | "mocha" | "ava" | "playwright" | "cypress" => {
            "the tests and their configuration"
        }
        "eslint" | "prettier" | "webpack" | "vite" | "rollup" | "esbuild" | "tsx" | "ts-node" => {
            "its configuration file (code)"
        }
        _ => return None,
    })
}

/// The values of a program's option: `-C dir`, `-Cdir`, `--directory
/// dir`, `--directory=dir`.
pub(super) fn named(args: &[&str], short: &str, long: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let next = args.get(i + 1).map(|s| (*s).to_string());
        if (!short.is_empty() && *a == short) || long.contains(a) {
            out.extend(next);
        } else if let Some(v) = long.iter().find_map(|l| a.strip_prefix(&format!("{l}="))) {
            out.push(v.to_string());
        } else if let Some(v) = a
            .strip_prefix(short)
            .filter(|v| !v.is_empty() && short.len() == 2)
        {
            out.push(v.to_string());
        }
    }
    out
}

/// Where a program runs its instructions (`make -C sub`, `npm --prefix
/// sub`), relative to where it is started: each directory option on top
/// of the last, as the programs take them.
pub fn run_dir(program: &str, args: &[&str]) -> std::path::PathBuf {
    let dirs = match program {
        "make" | "gmake" | "bmake" | "remake" => named(args, "-C", &["--directory"]),
        "npm" | "bun" => named(args, "", &["--prefix"]),
        "pnpm" => named(args, "-C", &["--dir", "--prefix"]),
        "yarn" => named(args, "", &["--cwd"]),
        "just" => named(args, "-d", &["--working-directory"]),
        "task" => named(args, "-d", &["--dir"]),
        "cargo" => named(args, "-C", &[]),
        _ => Vec::new(),
    };
    dirs.iter()
        .fold(std::path::PathBuf::new(), |d, next| d.join(next))
}

/// The files a program reads its instructions from, relative to where it
/// runs: the Makefile `make` runs, the `package.json` whose scripts `npm
/// run` runs, the justfile. A hook that runs such a program runs what
/// those files say when it runs, so a change to them asks in every mode
/// (as a change to a hook's own script does). A file given with the
/// program's own option (`make -f build.mk`) counts too. Programs that
/// run the whole project's code (`cargo`, `pytest`) name their manifests
/// and configuration; the code itself is the project's and is not
/// listed.
pub fn instruction_files(program: &str, args: &[&str]) -> Vec<String> {
    let dir = run_dir(program, args);
    // The files given with the program's own option, else its defaults.
    let given = match program {
        "make" | "gmake" | "bmake" | "remake" => named(args, "-f", &["--file", "--makefile"]),
        "just" => named(args, "-f", &["--justfile"]),
        "task" => named(args, "-t", &["--taskfile"]),
        "cargo" => named(args, "", &["--manifest-path"]),
        _ => Vec::new(),
    };
    if !given.is_empty() {
        return given
            .iter()
            .map(|f| dir.join(f).to_string_lossy().into_owned())
            .collect();
    }
    let fixed: &[&str] = match program {
        "make" | "gmake" | "bmake" | "remake" => &["GNUmakefile", "makefile", "Makefile"],
        "just" => &["justfile", "Justfile", ".justfile", "JUSTFILE"],
        "npm" | "pnpm" | "yarn" | "bun" | "corepack" => &["package.json", ".npmrc", ".yarnrc.yml"],
        "deno" => &["deno.json", "deno.jsonc"],
        "task" => &[
            "Taskfile.yml",
            "Taskfile.yaml",
            "taskfile.yml",
            "taskfile.yaml",
        ],
        "cargo" => &[
            "Cargo.toml",
            "build.rs",
            "rust-toolchain",
            "rust-toolchain.toml",
            ".cargo/config.toml",
            ".cargo/config",
            "Makefile.toml",
        ],
        "go" => &["go.mod", "go.work"],
        "pytest" | "py.test" => &[
            "conftest.py",
            "pytest.ini",
            "pyproject.toml",
            "setup.cfg",
            "tox.ini",
        ],
        "tox" => &["tox.ini", "pyproject.toml", "setup.cfg"],
        "nox" => &["noxfile.py"],
        "invoke" | "inv" => &["tasks.py", "invoke.yaml"],
        "rake" => &["Rakefile", "rakefile", "Rakefile.rb"],
        "composer" => &["composer.json"],
        "pre-commit" => &[".pre-commit-config.yaml"],
        "lefthook" => &["lefthook.yml", ".lefthook.yml"],
        "gradle" | "gradlew" => &[
            "build.gradle",
            "build.gradle.kts",
            "settings.gradle",
            "settings.gradle.kts",
        ],
        "mvn" | "mvnw" => &["pom.xml", ".mvn/maven.config", ".mvn/jvm.config"],
        "ant" => &["build.xml"],
        "sbt" => &["build.sbt"],
        "cmake" | "ctest" => &["CMakeLists.txt", "CMakePresets.json"],
        "ninja" => &["build.ninja"],
        "meson" => &["meson.build"],
        "scons" => &["SConstruct"],
        "mix" => &["mix.exs"],
        "swift" => &["Package.swift"],
        "zig" => &["build.zig"],
        _ => &[],
    };
    fixed
        .iter()
        .map(|f| dir.join(f).to_string_lossy().into_owned())
        .collect()
}

/// Interpreters: a script they run from the workspace may load the files
/// beside it.
fn is_interpreter(program: &str) -> bool {
    let stem = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        stem,
        "python"
            | "node"
            | "ruby"
            | "perl"
            | "php"
            | "bash"
            | "sh"
            | "zsh"
            | "dash"
            | "ksh"
            | "fish"
            | "lua"
            | "Rscript"
            | "julia"
            | "elixir"
            | "deno"
            | "bun"
    )
}

/// Why one command of a line runs instructions the workspace gives it,
/// in words; `python3 -m pytest` counts as `pytest`, an interpreter
/// running a workspace script outside `.lathe/` counts (the script may
/// load the files beside it), and so does a program that is itself a
/// file of the workspace.
pub fn command_instructions(c: &SimpleCommand, workspace: &std::path::Path) -> Option<String> {
    let name = c.basename();
    let args: Vec<&str> = c.argv.iter().skip(1).map(|w| w.text.as_str()).collect();
    if let Some(what) = instructions(name, &args) {
        return Some(format!("`{name}` runs {what}"));
    }
    if is_interpreter(name) {
        // `python3 -m pytest`, `python -m tox`.
        if let Some(i) = args.iter().position(|a| *a == "-m")
            && let Some(module) = args.get(i + 1)
        {
            if let Some(what) = instructions(module, &args[i + 2..]) {
                return Some(format!("`{name} -m {module}` runs {what}"));
            }
            return Some(format!(
                "`{name} -m {module}` may load the workspace's modules"
            ));
        }
        if let Some(Program::Path { path, .. }) = &c.script
            && path.starts_with(workspace)
            && !path.starts_with(workspace.join(".lathe"))
        {
            return Some(format!(
                "`{name}` runs {}, which may load the files beside it",
                path.strip_prefix(workspace).unwrap_or(path).display()
            ));
        }
    }
    if let Program::Path { path, .. } = &c.program
        && path.starts_with(workspace)
        && !path.starts_with(workspace.join(".lathe"))
    {
        return Some(format!("`{name}` is a file of the workspace"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_tools_and_runners_read_the_workspace() {
        assert_eq!(
            instructions("make", &["-s", "hookcheck"]),
            Some("the Makefile")
        );
        assert_eq!(
            instructions("npm", &["run", "-s", "lint"]),
            Some("package.json's scripts")
        );
        assert!(instructions("cargo", &["test"]).is_some());
        assert!(instructions("cargo", &["fmt", "--check"]).is_some());
        assert!(instructions("uv", &["run", "x"]).is_some());
        assert!(instructions("uv", &["pip", "list"]).is_none());
        assert!(instructions("rg", &["x"]).is_none());
        assert!(instructions("grep", &["-r", "x"]).is_none());
        assert!(is_interpreter("python3.12") && is_interpreter("node"));
        assert!(!is_interpreter("rg"));
    }
}
