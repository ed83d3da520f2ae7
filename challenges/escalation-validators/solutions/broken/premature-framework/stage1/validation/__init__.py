"""A small, extensible validation framework: rules, combinators and a registry.

base.py has the Validator base class, its result type and the AllOf/AnyOf combinators;
rules.py the reusable rules; registry.py the registry that maps names to validators.
"""
