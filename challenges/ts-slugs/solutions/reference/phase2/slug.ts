/** The longest slug: a longer one is cut at the last word boundary that fits. */
export const MAX_LENGTH = 60;

/** Latin letters that Unicode does not decompose into a base letter and marks. */
const LETTERS: Record<string, string> = { ß: "ss", æ: "ae", ø: "o", œ: "oe", ł: "l", đ: "d", þ: "th" };

/**
 * The URL slug of a post's title: accented Latin letters transliterated ("Crème" -> "creme",
 * "Straße" -> "strasse"), then lower-case ASCII letters and digits, every run of anything else
 * one hyphen, none at either end; at most MAX_LENGTH characters, cut between words.
 * @throws RangeError when the title has no letter or digit to keep (there would be no slug).
 */
export function slugify(title: string): string {
  const latin = title
    .toLowerCase()
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(/[ßæøœłđþ]/g, (letter) => LETTERS[letter] ?? letter);
  const slug = latin.replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  if (slug === "") {
    throw new RangeError(`no letter or digit to make a slug of in ${JSON.stringify(title)}`);
  }
  return shorten(slug);
}

/** `slug` cut to MAX_LENGTH at its last hyphen that fits; a first word longer than that is cut. */
function shorten(slug: string): string {
  if (slug.length <= MAX_LENGTH) {
    return slug;
  }
  const boundary = slug.lastIndexOf("-", MAX_LENGTH);
  return boundary > 0 ? slug.slice(0, boundary) : slug.slice(0, MAX_LENGTH);
}
