// A reporter for node's test runner (`node --test --test-reporter=./junit-reporter.mjs`) that
// writes JUnit XML. Node has a junit reporter of its own from 20.10 only; Debian's nodejs is 18.
// Each leaf test is a case, named by its file ("slug.test.mjs" -> classname "slug") and its
// name; a test with subtests is a case only when it failed on its own (a file that does not
// load fails as the file's own test).

const escape = (text) =>
  String(text).replace(/[<>&"]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;" })[c]);

const base = (file) => (file ? String(file).split("/").pop() : "");

export default async function* junit(source) {
  const cases = [];
  const children = []; // children[n]: how many tests at nesting n ended since their parent began
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { name, nesting, file, details } = event.data;
    const parent = (children[nesting + 1] ?? 0) > 0;
    children[nesting + 1] = 0;
    children[nesting] = (children[nesting] ?? 0) + 1;
    const error = details?.error;
    const own = event.type === "test:fail" && error?.failureType !== "subtestsFailed";
    if (parent && !own) continue;
    const where = base(file) || base(name);
    const classname = where.split(".")[0] || "node";
    const message = error ? String(error.cause?.message ?? error.cause ?? error.message) : "";
    cases.push({ classname, name: name.startsWith("/") ? base(name) : name, failed: event.type === "test:fail", message });
  }
  const failures = cases.filter((c) => c.failed).length;
  let xml = `<?xml version="1.0" encoding="utf-8"?>\n<testsuite name="node" tests="${cases.length}" failures="${failures}">\n`;
  for (const c of cases) {
    xml += `  <testcase classname="${escape(c.classname)}" name="${escape(c.name)}"`;
    xml += c.failed ? `>\n    <failure message="${escape(c.message.slice(0, 2000))}"/>\n  </testcase>\n` : "/>\n";
  }
  yield xml + "</testsuite>\n";
}
