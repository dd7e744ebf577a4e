"""Shell command lines for the permission rules: parsing (``parse``), what a command runs
(``commands``) and what is risky (``risk``)."""
