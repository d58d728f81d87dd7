"""Chart builders, one module per page (plotly only, no Streamlit), the shared look in base.py, and
view.py, the one place a figure is handed to Streamlit."""
