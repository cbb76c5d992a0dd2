//! Copy link: a link to the page with the current settings (never the API key), copied to the
//! clipboard — or, where the browser refuses, shown selected in a field to copy by hand.

use leptos::prelude::*;

use crate::settings::Settings;

/// The link shown, and what became of copying it.
pub type Shared = RwSignal<Option<(String, String)>>;

/// Makes the link of `settings`, shows it in `shared` and copies it.
pub fn copy_link(settings: RwSignal<Settings>, shared: Shared) {
    let query = settings.with_untracked(Settings::share_query);
    let link = format!("{}?{query}", crate::page_path_url().unwrap_or_default());
    shared.set(Some((link.clone(), "Copying…".into())));
    leptos::task::spawn_local(async move {
        let outcome = match crate::copy_to_clipboard(&link).await {
            Ok(()) => "Copied to the clipboard.".to_string(),
            Err(why) => format!("Copy it from the field ({why})."),
        };
        shared.try_set(Some((link, outcome)));
    });
}

/// The link (`data-testid="share-link"`, selected when focused) and what became of copying it.
#[component]
pub fn ShareLink(shared: Shared) -> impl IntoView {
    move || {
        shared.get().map(|(link, outcome)| {
            view! {
                <div class="share">
                    <label for="share-link">"Link to these settings (no API key)"</label>
                    <input
                        id="share-link"
                        data-testid="share-link"
                        readonly
                        prop:value=link
                        on:focus=move |ev| {
                            use wasm_bindgen::JsCast;
                            if let Some(input) = ev
                                .target()
                                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                            {
                                input.select();
                            }
                        }
                    />
                    <span class="field-note" role="status">{outcome}</span>
                </div>
            }
        })
    }
}
