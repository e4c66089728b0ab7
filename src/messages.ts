/**
 * The success sentences of the API, exactly as the specification spells them (`succesful`
 * included). The handlers send them and the API description states them: one copy.
 */
export const SUCCESS_MESSAGES = {
  registered: 'User register succesful',
  inserted: 'Data inserted successfully',
  updated: 'Data updated successfully',
  deleted: 'Data deleted successfully',
  passwordChanged: 'Password changed',
} as const;
