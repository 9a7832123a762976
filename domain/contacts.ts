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
