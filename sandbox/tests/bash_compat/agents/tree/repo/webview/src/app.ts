import { routes, navigate } from "./routes";

const pageSize = 20;

export function render(root: HTMLElement): void {
  root.innerHTML = "";
  for (const route of routes) {
    const link = document.createElement("a");
    link.textContent = route.title;
    link.onclick = () => navigate(route.path);
    root.appendChild(link);
  }
}

// TODO: remember the last route in localStorage
window.addEventListener("navigate-to-route", (event) => {
  console.log("route", (event as CustomEvent).detail, pageSize);
});
