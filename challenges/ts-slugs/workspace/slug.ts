/** The URL slug of a post's title. */
export function slugify(title: string): string {
  throw new Error(`slugify is not implemented yet (title: ${title})`);
}
