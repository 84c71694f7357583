/** Timestamps on the wire are ISO-8601 strings; an absent one is the empty string. */
export const iso = (d: Date | null | undefined): string => (d ? d.toISOString() : '');
