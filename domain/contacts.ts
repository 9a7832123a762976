/** The contact properties a role may require to be filled. */
export interface ContactFields {
  name: string | null;
  email: string | null;
  telephone: string | null;
  external_ref?: string | null;
}

/** The fields a role requires that the contact leaves empty. */
export function missingFields(contact: ContactFields, requiredFields: readonly string[]): string[] {
  return requiredFields.filter((field) => {
    const value = (contact as unknown as Record<string, unknown>)[field];
    return value === null || value === undefined || value === '';
  });
}

/**
 * The role assignments a body names that are not of the caller's contacts (`known`), one problem
 * per entry: an assignment of another account's contact gets the answer one that does not exist
 * gets, and is never stored where its owner would later trip over it.
 */
export function unknownAssignments(
  given: readonly string[],
  known: ReadonlySet<string>,
): Array<{ name: string; reason: string }> {
  return given.flatMap((id, index) =>
    known.has(id)
      ? []
      : [{ name: `role_assignments.${index}`, reason: `no role assignment ${id} of your contacts` }],
  );
}
