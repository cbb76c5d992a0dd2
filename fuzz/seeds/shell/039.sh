ls data | xargs -I{} echo file: {}
