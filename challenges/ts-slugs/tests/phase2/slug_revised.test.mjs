// Phase 2: Latin letters transliterated, slugs at most 60 characters cut between words.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

const { slugify } = await import(pathToFileURL(`${process.env.SLUG_BUILD}/slug.js`).href);

test("transliterates_accents", () => {
  assert.equal(slugify("Crème Brûlée"), "creme-brulee");
  assert.equal(slugify("Ça va? Naïve résumé"), "ca-va-naive-resume");
  assert.equal(slugify("Café au lait"), "cafe-au-lait");
});

test("transliterates_special_letters", () => {
  assert.equal(slugify("Straße"), "strasse");
  assert.equal(slugify("Smørrebrød & Œuvre"), "smorrebrod-oeuvre");
  assert.equal(slugify("Łódź"), "lodz");
});

test("other_scripts_stay_separators", () => {
  assert.equal(slugify("I ❤ Tokyo 東京"), "i-tokyo");
  assert.throws(() => slugify("東京"), RangeError);
});

test("long_slugs_cut_between_words", () => {
  const title = "The Quick Brown Fox Jumps Over The Lazy Dog While Everyone Watches Quietly";
  const slug = slugify(title);
  assert.equal(slug, "the-quick-brown-fox-jumps-over-the-lazy-dog-while-everyone");
  const exact = "a".repeat(29) + " " + "b".repeat(30); // 60 characters: kept whole
  assert.equal(slugify(exact), "a".repeat(29) + "-" + "b".repeat(30));
});

test("a_long_first_word_is_cut", () => {
  assert.equal(slugify("x".repeat(80) + " tail"), "x".repeat(60));
});
