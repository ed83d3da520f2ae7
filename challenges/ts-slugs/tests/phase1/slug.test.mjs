// Phase 1: slugs of ASCII titles. The compiled workspace is at $SLUG_BUILD (support/tstest.py).
import assert from "node:assert/strict";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

const { slugify } = await import(pathToFileURL(`${process.env.SLUG_BUILD}/slug.js`).href);

test("lowercases_and_joins_words", () => {
  assert.equal(slugify("Hello World"), "hello-world");
  assert.equal(slugify("Release 2.0 Notes"), "release-2-0-notes");
  assert.equal(slugify("Top 10 Tips"), "top-10-tips");
});

test("collapses_separator_runs", () => {
  assert.equal(slugify("  Rock -- & -- Roll!!  "), "rock-roll");
  assert.equal(slugify("snake___case and\ttabs"), "snake-case-and-tabs");
});

test("non_ascii_is_a_separator", () => {
  assert.equal(slugify("Café au lait"), "caf-au-lait");
});

test("rejects_titles_without_letters", () => {
  for (const title of ["", "   ", "!!! ???", "--"]) {
    assert.throws(() => slugify(title), RangeError, JSON.stringify(title));
  }
});
