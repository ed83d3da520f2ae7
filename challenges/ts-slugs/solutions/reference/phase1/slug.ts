/**
 * The URL slug of a post's title: lower-case ASCII letters and digits, every run of anything
 * else one hyphen, none at either end.
 * @throws RangeError when the title has no ASCII letter or digit (there would be no slug).
 */
export function slugify(title: string): string {
  const slug = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (slug === "") {
    throw new RangeError(`no letter or digit to make a slug of in ${JSON.stringify(title)}`);
  }
  return slug;
}
