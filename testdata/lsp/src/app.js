import { mergeDeep } from "./util/merge.js";

export function start(config) {
  return mergeDeep({}, config, { overwrite: true });
}
