export function App() {
  return <div>Hello</div>;
}
