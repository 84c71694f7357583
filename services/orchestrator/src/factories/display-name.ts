/** Names of a factory's webhooks and automations given through the API: 1-100 characters without control characters (unique in the factory). */
export const DISPLAY_NAME = {
  test: (name: string): boolean => name.length >= 1 && name.length <= 100 && !/\p{Cc}/u.test(name),
};
export const DISPLAY_NAME_RULE = '1-100 characters without control characters';
