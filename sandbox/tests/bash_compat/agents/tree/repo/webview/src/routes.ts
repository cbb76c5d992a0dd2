export type Route = { path: string; title: string };

export const routes: Route[] = [
  { path: "/", title: "Sessions" },
  { path: "/session/:id", title: "Session" },
  { path: "/settings", title: "Settings" },
];

export function navigate(path: string): void {
  window.dispatchEvent(new CustomEvent("navigate-to-route", { detail: path }));
}
