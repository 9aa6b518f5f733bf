"""_bindings"""
