export const defaults = {
  theme: "light",
  language: "en",
  pageSize: 20,
};
