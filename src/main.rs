//! Entry point of the playground's wasm binary: mounts [`tether_playground::App`] on `<body>`.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(tether_playground::App);
}
