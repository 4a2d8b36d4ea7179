export const CHECK_RECORDER = Symbol('CHECK_RECORDER');
