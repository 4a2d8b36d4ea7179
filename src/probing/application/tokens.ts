export const HTTP_PROBER = Symbol('HTTP_PROBER');
export const CHECK_RECORDER = Symbol('CHECK_RECORDER');
